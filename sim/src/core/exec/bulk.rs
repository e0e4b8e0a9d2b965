//! Bulk and tensor (TMA) copies: `cp.async.bulk`, `cp.async.bulk.tensor`,
//! `cp.reduce.async.bulk.tensor` and the bulk groups (PTX ISA 9.0 §9.7.9.25.4–5).
//!
//! The SM's TMA engine (`sm.tma`) splits a copy into L1-line requests and issues one every
//! `line_bytes / bytes_per_cycle` cycles (a store's: `store_bytes_per_cycle`), from when the
//! engine is free; each request runs the
//! `ld.global.cg` (loads) or `st.global.cg` (stores) memory program at its issue slot, so the
//! bytes come from L2 or DRAM as the hierarchy holds them then and use its bandwidth. A load's
//! bytes land in shared memory (`core::landing`) `sm.tma.latency` cycles after its last line
//! came back, where they also complete the mbarrier's transactions. A store reads shared
//! memory at issue and its bulk group completes when its last line is written; a reduction
//! reads each line, combines and writes it back in one step (atomic with respect to every
//! other access, as `.add` requires): the `red.global` program, its `atomOp` combining the
//! whole line (`hierarchy::LineReduce`).
//!
//! Under the component memory system (`memory_engine: components`) the copy's line requests
//! go to the SM's TMA engine there (`mem::system::tma`), which issues them into the L1 at its
//! rate as the L1 takes them; what completes the copy — the bytes landing, the bulk group done
//! — waits in a job (`core::tma_job`) until the last line has completed.

use super::memory::{Prog, Timing};
use super::*;
use crate::core::async_state::BulkOp;
use crate::core::landing::Landing;
use crate::core::tma_job::{gather_runs, land_in, Run, TmaJob};
use crate::mem::hierarchy::{LineReduce, OpProgram, Target, Txn};
use gpusim_isa::semantics::tensor_map::{TensorMap, TmaType, TENSOR_MAP_BYTES};
use gpusim_isa::semantics::Swizzle;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_bulk(&mut self, w: &mut Warp, inst: &Inst, exec: Mask) -> Result<(), Fault> {
        match &inst.op {
            Op::CpAsyncBulkCommit => {
                if exec != 0 {
                    w.hopper.bulk_group += 1;
                }
            }
            Op::CpAsyncBulkWait { n, read } => {
                if exec != 0 {
                    let older = w.hopper.bulk_group.saturating_sub(*n as u64);
                    let t = w
                        .hopper
                        .bulk_ops
                        .iter()
                        .filter(|b| b.group < older)
                        .map(|b| if *read { b.read_done } else { b.done })
                        .max();
                    if let Some(t) = t {
                        w.hold(t, crate::stats::Stall::Membar);
                    }
                    let now = self.cycle;
                    w.hopper.bulk_ops.retain(|b| b.done > now);
                }
            }
            Op::CpAsyncBulk {
                dir,
                dst,
                src,
                size,
                mbar,
                multicast,
            } => self.collected(|env| {
                for l in lanes(exec) {
                    env.bulk_copy(w, inst, l, *dir, (dst, src), size, mbar, multicast)?;
                }
                Ok(())
            })?,
            Op::CpAsyncBulkTensor {
                dir,
                rank,
                smem,
                tmap,
                coords,
                mbar,
                multicast,
            } => self.collected(|env| {
                for l in lanes(exec) {
                    let map = env.tensor_map(w, inst, l, tmap, *rank)?;
                    let c: Vec<i64> = coords[..*rank as usize]
                        .iter()
                        .map(|o| env.val(w, o, l) as u32 as i32 as i64)
                        .collect();
                    match dir {
                        TensorDir::Load => {
                            env.tensor_load(w, inst, l, &map, &c, smem, mbar, multicast)?
                        }
                        TensorDir::Store => env.tensor_store(w, inst, l, &map, &c, smem, None)?,
                        TensorDir::Reduce(r) => {
                            env.tensor_store(w, inst, l, &map, &c, smem, Some(*r))?
                        }
                    }
                }
                Ok(())
            })?,
            _ => unreachable!("`execute` dispatches only bulk copies here"),
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn bulk_copy(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        l: usize,
        dir: BulkDir,
        (dst, src): (&Address, &Address),
        size: &Operand,
        mbar: &Option<Address>,
        multicast: &Option<Operand>,
    ) -> Result<(), Fault> {
        let n = self.val(w, size, l) & 0xFFFF_FFFF;
        if n % 16 != 0 {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::Misaligned,
                format!("cp.async.bulk size {n} is not a multiple of 16"),
            ));
        }
        let space_of = |d: BulkDir| match d {
            BulkDir::SharedToGlobal => (Space::Global, Space::Shared),
            BulkDir::GlobalToShared => (Space::Shared, Space::Global),
            BulkDir::SharedToCluster => (Space::Shared, Space::Shared),
        };
        let (dsp, ssp) = space_of(dir);
        let (d_rank, d) = if dsp == Space::Shared {
            self.shared_dst(w, inst, l, dst, n, 16)?
        } else {
            (None, self.bulk_addr(w, inst, l, dsp, dst, n, 16)?)
        };
        let s = self.bulk_addr(w, inst, l, ssp, src, n, 16)?;
        match dir {
            BulkDir::SharedToGlobal => {
                let data = self.shared[s as usize..(s + n) as usize].to_vec();
                self.store_runs(w, inst, l, &[(0, d, n)], &data, None)?;
            }
            BulkDir::GlobalToShared => {
                let mbar = mbar.as_ref().expect("parsed with its mbarrier");
                let (bar_rank, bar) = self.mbar_target(w, inst, Space::Shared, mbar, l)?;
                let ranks = self.destinations(w, inst, l, multicast, (d_rank, bar_rank))?;
                let landing = self.landing(w, d, vec![0u8; n as usize], Swizzle::None, bar);
                self.load_runs(w, inst, l, vec![(0, s, n)], landing, &ranks)?;
            }
            BulkDir::SharedToCluster => {
                let mbar = mbar.as_ref().expect("parsed with its mbarrier");
                let (bar_rank, bar) = self.mbar_target(w, inst, Space::Shared, mbar, l)?;
                let ranks = self.destinations(w, inst, l, multicast, (d_rank, bar_rank))?;
                let data = self.shared[s as usize..(s + n) as usize].to_vec();
                let mut landing = self.landing(w, d, data, Swizzle::None, bar);
                if self.submitting() {
                    // Only the engine's time: its one operation moves no global memory.
                    let op = self
                        .mem
                        .issuing
                        .push_op(cg_program("ld"), Txn::new(Target::Shared, 0, 0))
                        as usize;
                    self.land_job(op..op + 1, Vec::new(), landing, ranks, Some(n));
                } else {
                    landing.ready = self.engine_slots(n, self.tma().bytes_per_cycle).1
                        + self.tma().latency as u64;
                    land_in(w, &ranks, landing);
                }
            }
        }
        Ok(())
    }

    /// The job that lands a copy whose operations `ops` are collected (`TmaJob::Land`).
    fn land_job(
        &mut self,
        ops: std::ops::Range<usize>,
        runs: Vec<Run>,
        landing: Landing,
        ranks: Vec<Option<u32>>,
        engine: Option<u64>,
    ) {
        let job = TmaJob::Land {
            ops,
            runs,
            line_bytes: self.mem.sm.l1.line_bytes(),
            landing: Box::new(landing),
            ranks,
            latency: self.tma().latency as u64,
            engine,
        };
        self.mem.issuing.jobs.push(job);
    }

    /// Under the component memory system: a copy's operations go to the TMA engine.
    fn submitting(&self) -> bool {
        self.mem.submit && self.mem.issuing.collecting
    }

    /// The landing of `data` at shared address `base` through `swizzle`, completing barrier
    /// `bar`, in the issuing warp's CTA (ready time set by the caller).
    fn landing(&self, w: &Warp, base: u64, data: Vec<u8>, swizzle: Swizzle, bar: u64) -> Landing {
        Landing {
            cta: w.cta,
            base,
            data,
            swizzle,
            mbar: Some(bar),
            ..Landing::control(0)
        }
    }

    /// Read `runs` of global memory into `landing`'s bytes and land them in each CTA of
    /// `ranks` the engine's latency after the last line came back: at issue, or (component
    /// memory system) through the TMA engine and a job.
    #[allow(clippy::too_many_arguments)]
    fn load_runs(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        l: usize,
        runs: Vec<Run>,
        mut landing: Landing,
        ranks: &[Option<u32>],
    ) -> Result<(), Fault> {
        let latency = self.tma().latency as u64;
        let lines = self.checked_lines(w, inst, l, &runs, "TMA load")?;
        if lines.is_empty() {
            // Nothing to read (a box wholly out of bounds): only the fill lands.
            landing.ready = self.cycle + 1 + latency;
            land_in(w, ranks, landing);
            return Ok(());
        }
        if self.submitting() {
            let first = self.mem.issuing.ops.len();
            for &(line, m) in &lines {
                let txn = Txn::new(Target::Global, line, m);
                self.mem.issuing.push_op(cg_program("ld"), txn);
            }
            let ops = first..first + lines.len();
            self.land_job(ops, runs, landing, ranks.to_vec(), None);
            return Ok(());
        }
        let back = self.read_runs(w, inst, l, &lines, &runs, &mut landing.data)?;
        landing.ready = back + latency;
        land_in(w, ranks, landing);
        Ok(())
    }

    /// Write `runs` of `data` to global memory (combined with the current values under
    /// `reduce`), in the warp's open bulk group: at issue, or (component memory system)
    /// through the TMA engine and a job.
    fn store_runs(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        l: usize,
        runs: &[Run],
        data: &[u8],
        reduce: Option<(TmaReduce, TmaType)>,
    ) -> Result<(), Fault> {
        let group = w.hopper.bulk_group;
        if self.submitting() {
            let lines = self.checked_lines(w, inst, l, runs, "TMA store")?;
            for &(line, m) in &lines {
                let txn = line_txn((line, m), self.mem.sm.l1.line_bytes(), runs, data, reduce);
                self.mem.issuing.push_op(store_program(reduce), txn);
            }
            if !lines.is_empty() {
                self.mem.issuing.jobs.push(TmaJob::Store { group });
            }
            return Ok(());
        }
        let (read_done, done) = self.write_runs(w, inst, l, runs, data, reduce)?;
        w.hopper.bulk_ops.push(BulkOp {
            group,
            read_done,
            done,
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn tensor_load(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        l: usize,
        map: &TensorMap,
        coords: &[i64],
        smem: &Address,
        mbar: &Option<Address>,
        multicast: &Option<Operand>,
    ) -> Result<(), Fault> {
        let bytes = map.box_bytes();
        let (dst_rank, base) = self.shared_dst(w, inst, l, smem, bytes, 128)?;
        self.swizzled_fits(w, inst, l, map, base)?;
        let mbar = mbar.as_ref().expect("parsed with its mbarrier");
        let (bar_rank, bar) = self.mbar_target(w, inst, Space::Shared, mbar, l)?;
        let ranks = self.destinations(w, inst, l, multicast, (dst_rank, bar_rank))?;
        let mut data = vec![0u8; bytes as usize];
        if map.oob_nan
            && matches!(
                map.dtype,
                TmaType::F16 | TmaType::Bf16 | TmaType::F32 | TmaType::Tf32 | TmaType::F64
            )
        {
            fill_nan(&mut data, map.dtype);
        }
        let mut runs = Vec::new();
        map.for_each_run(coords, |o, a, n| runs.push((o, a, n)));
        let landing = self.landing(w, base, data, map.swizzle, bar);
        self.load_runs(w, inst, l, runs, landing, &ranks)
    }

    /// The CTAs a copy lands in: each rank of the multicast mask, or the destination's CTA
    /// (which must also hold the barrier).
    pub(super) fn destinations(
        &self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        multicast: &Option<Operand>,
        (dst, bar): (Option<u32>, Option<u32>),
    ) -> Result<Vec<Option<u32>>, Fault> {
        if dst != bar {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!("a copy into cluster rank {dst:?} completes on the barrier of rank {bar:?}: both must be in the same CTA (None = this CTA)"),
            ));
        }
        let Some(m) = multicast else {
            return Ok(vec![dst]);
        };
        let mask = self.val(w, m, l) & 0xFFFF;
        let n: u32 = self.geom.cluster.iter().product();
        if mask == 0 || mask >> n != 0 {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!("multicast ctaMask {mask:#x} must name CTAs of this CTA's cluster of {n}"),
            ));
        }
        let own = self.cluster_rank();
        Ok((0..n)
            .filter(|r| mask >> r & 1 == 1)
            .map(|r| (r != own).then_some(r))
            .collect())
    }

    /// A copy's shared-memory destination: aligned, possibly in a peer CTA (rank), in bounds.
    fn shared_dst(
        &self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        a: &Address,
        n: u64,
        align: u64,
    ) -> Result<(Option<u32>, u64), Fault> {
        let (sp, at) = self.effective(w, Space::Shared, a, l);
        if sp != Space::Shared || at % align != 0 {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::Misaligned,
                format!("a copy's shared destination {at:#x} (.{}) must be a {align}-byte aligned shared address", sp.name()),
            ));
        }
        self.cluster_target(w, inst, l, at, n)
    }

    #[allow(clippy::too_many_arguments)]
    fn tensor_store(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        l: usize,
        map: &TensorMap,
        coords: &[i64],
        smem: &Address,
        reduce: Option<TmaReduce>,
    ) -> Result<(), Fault> {
        let bytes = map.box_bytes();
        let base = self.bulk_addr(w, inst, l, Space::Shared, smem, bytes, 128)?;
        self.swizzled_fits(w, inst, l, map, base)?;
        // The box's image in box order, read through the swizzle, 16 bytes at a time.
        let mut data = vec![0u8; bytes as usize];
        for (k, chunk) in data.chunks_mut(16).enumerate() {
            let a = map.shared_addr(base, 16 * k as u64) as usize;
            chunk.copy_from_slice(&self.shared[a..a + chunk.len()]);
        }
        let mut runs = Vec::new();
        map.for_each_run(coords, |o, a, n| runs.push((o, a, n)));
        let red = reduce.map(|r| (r, map.dtype));
        self.store_runs(w, inst, l, &runs, &data, red)
    }

    /// The tensor map at `tmap` (in parameter, constant or global memory, or a generic address
    /// of one), decoded and checked against the instruction's rank.
    pub(super) fn tensor_map(
        &self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        tmap: &Address,
        rank: u8,
    ) -> Result<TensorMap, Fault> {
        let space = match tmap.base {
            AddrBase::Symbol(s) if matches!(self.prog.locs[s.0 as usize], Loc::KernelParam(_)) => {
                Space::Param
            }
            _ => Space::Generic,
        };
        let (sp, a) = self.effective(w, space, tmap, l);
        let n = TENSOR_MAP_BYTES as u64;
        let bytes: Option<&[u8]> = match sp {
            Space::Param => self.params.get(a as usize..(a + n) as usize),
            Space::Const => self.consts.get(a as usize..(a + n) as usize),
            Space::Global => self.global().bytes(a, n),
            _ => None,
        };
        let Some(bytes) = bytes else {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!(
                    "tensor map address {a:#x} in .{} memory holds no 128-byte tensor map",
                    sp.name()
                ),
            ));
        };
        let map = TensorMap::decode(bytes).map_err(|e| {
            self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!("tensor map at {a:#x}: {e}"),
            )
        })?;
        if map.rank != rank as usize {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::Control,
                format!(
                    "a .{rank}d tensor copy names a tensor map of rank {}",
                    map.rank
                ),
            ));
        }
        Ok(map)
    }

    /// Lane `l`'s address in `space` for `n` bytes: aligned to `align`, in bounds.
    #[allow(clippy::too_many_arguments)]
    fn bulk_addr(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        l: usize,
        space: Space,
        a: &Address,
        n: u64,
        align: u64,
    ) -> Result<u64, Fault> {
        let (sp, at) = self.effective(w, space, a, l);
        let sp = if sp == Space::Generic {
            Space::Global
        } else {
            sp
        };
        if at % align != 0 {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::Misaligned,
                format!(
                    "bulk copy address {at:#x} in .{} memory is not {align}-byte aligned",
                    sp.name()
                ),
            ));
        }
        let ok = match sp {
            Space::Shared => at + n <= self.shared.len() as u64,
            Space::Global => n == 0 || self.global().bytes(at, n).is_some(),
            _ => false,
        };
        if !ok || sp != space {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!(
                    "bulk copy of {n} bytes at {at:#x}: must lie in .{} memory (found .{}{})",
                    space.name(),
                    sp.name(),
                    if sp == space { ", out of bounds" } else { "" }
                ),
            ));
        }
        Ok(at)
    }

    /// Every swizzled chunk of the box must stay inside the CTA's shared memory.
    fn swizzled_fits(
        &self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        map: &TensorMap,
        base: u64,
    ) -> Result<(), Fault> {
        let bytes = map.box_bytes();
        let top = (0..bytes.div_ceil(16))
            .map(|k| map.shared_addr(base, 16 * k) + 16)
            .max()
            .unwrap_or(base);
        if top > self.shared.len() as u64 {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!(
                    "the {bytes}-byte tensor box at shared address {base:#x} (swizzle {:?}) reaches {top:#x}, past the CTA's {} bytes",
                    map.swizzle,
                    self.shared.len()
                ),
            ));
        }
        Ok(())
    }

    /// The engine's issue slots for `n` bytes from now at `rate` bytes per cycle: (first slot,
    /// the cycle after the last), and it is busy until then.
    fn engine_slots(&mut self, n: u64, rate: u32) -> (u64, u64) {
        let start = self.cycle.max(self.mem.sm.tma_free);
        let end = start + n.div_ceil(rate as u64).max(1);
        self.mem.sm.tma_free = end;
        (start, end)
    }

    /// The lines that `runs` of global memory touch, with the bytes of each, in address order.
    fn lines_of(&self, runs: &[Run]) -> Vec<(u64, crate::mem::cache::Mask)> {
        let lb = self.mem.sm.l1.line_bytes();
        let mut lines: Vec<(u64, crate::mem::cache::Mask)> = Vec::new();
        for &(_, a, n) in runs {
            let mut x = a;
            while x < a + n {
                let line = x - x % lb;
                let hi = (a + n).min(line + lb);
                let (o, k) = (x - line, hi - x);
                let m: crate::mem::cache::Mask = if k >= 128 {
                    !0
                } else {
                    ((1u128 << k) - 1) << o
                };
                lines.push((line, m));
                x = hi;
            }
        }
        lines.sort_unstable_by_key(|x| x.0);
        lines.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 |= b.1;
                true
            } else {
                false
            }
        });
        lines
    }

    /// The lines of `runs`, bounds-checked (`what` names the access in a fault).
    fn checked_lines(
        &self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        runs: &[Run],
        what: &str,
    ) -> Result<Vec<(u64, crate::mem::cache::Mask)>, Fault> {
        for &(_, a, n) in runs {
            if self.global().bytes(a, n).is_none() {
                return Err(self.access_fault_at(w, inst, l, a, n, what));
            }
        }
        Ok(self.lines_of(runs))
    }

    /// The engine's slots for `lines` lines from now at `rate`: (first slot, the cycle after
    /// the last).
    fn engine_lines(&mut self, lines: usize, rate: u32) -> (u64, u64) {
        let lb = self.mem.sm.l1.line_bytes();
        self.engine_slots(lines as u64 * lb, rate)
    }

    /// The cycle the engine issues its `k`-th line request of a copy starting at `start`.
    fn engine_slot(&self, start: u64, k: usize, rate: u32) -> u64 {
        start + (k as u64 * self.mem.sm.l1.line_bytes()) / rate as u64
    }

    /// Read `lines` (those of `runs`) through the engine at issue into `out` (offsets of the
    /// runs); returns the cycle the last line came back.
    fn read_runs(
        &mut self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        lines: &[(u64, crate::mem::cache::Mask)],
        runs: &[Run],
        out: &mut [u8],
    ) -> Result<u64, Fault> {
        let rate = self.tma().bytes_per_cycle;
        let (start, _) = self.engine_lines(lines.len(), rate);
        let lb = self.mem.sm.l1.line_bytes();
        let prog = cg_program("ld");
        let mut t = Timing {
            release: self.cycle,
            end: self.cycle,
        };
        let mut got: Vec<(u64, [u8; 128], bool)> = Vec::with_capacity(lines.len());
        let now = self.cycle;
        for (k, &(line, m)) in lines.iter().enumerate() {
            self.cycle = self.engine_slot(start, k, rate);
            let mut txn =
                crate::mem::hierarchy::Txn::new(crate::mem::hierarchy::Target::Global, line, m);
            let r = self.run_txn(w, inst, prog, &mut txn, l);
            self.cycle = now;
            t.add(r?);
            got.push((line, txn.data, txn.wrote_regs));
        }
        gather_runs(
            runs,
            lb,
            |line| {
                let j = got.binary_search_by_key(&line, |g| g.0).ok()?;
                got[j].2.then_some(&got[j].1)
            },
            out,
        );
        Ok(t.release)
    }

    /// Write `runs` of `data` to global memory through the engine (combined with the current
    /// values under `reduce`); returns (source read, last write done).
    fn write_runs(
        &mut self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        runs: &[Run],
        data: &[u8],
        reduce: Option<(TmaReduce, TmaType)>,
    ) -> Result<(u64, u64), Fault> {
        let lines = self.checked_lines(w, inst, l, runs, "TMA store")?;
        let rate = self.tma().store_bytes_per_cycle();
        let (start, end) = self.engine_lines(lines.len(), rate);
        let prog = store_program(reduce);
        let lb = self.mem.sm.l1.line_bytes();
        let mut t = Timing {
            release: self.cycle,
            end: self.cycle,
        };
        let now = self.cycle;
        for (k, &(line, m)) in lines.iter().enumerate() {
            self.cycle = self.engine_slot(start, k, rate);
            let mut txn = line_txn((line, m), lb, runs, data, reduce);
            let r = self.run_txn(w, inst, prog, &mut txn, l);
            self.cycle = now;
            t.add(r?);
            if txn.changed {
                *self.epoch += 1;
            }
        }
        Ok((end, t.end.max(t.release)))
    }

    fn access_fault_at(
        &self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        a: u64,
        n: u64,
        what: &str,
    ) -> Fault {
        self.fault(
            w,
            inst,
            l,
            FaultKind::OutOfBounds,
            format!("{what} of {n} bytes at global address {a:#x} is outside every allocation"),
        )
    }
}

/// The NaN fill pattern of a float tensor (the canonical NaN of its type).
fn fill_nan(data: &mut [u8], ty: TmaType) {
    let pat: &[u8] = match ty {
        TmaType::F16 => &[0xFF, 0x7F],
        TmaType::Bf16 => &[0xC0, 0x7F],
        TmaType::F64 => &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF8, 0x7F],
        _ => &[0x00, 0x00, 0xC0, 0x7F],
    };
    for c in data.chunks_mut(pat.len()) {
        c.copy_from_slice(&pat[..c.len()]);
    }
}

/// Line `line`'s operation of a bulk store (bytes `m`) of `runs` of `data`: the bytes to
/// write, or under `reduce` the operands its `atomOp` combines with the line's values.
fn line_txn(
    (line, m): (u64, crate::mem::cache::Mask),
    lb: u64,
    runs: &[Run],
    data: &[u8],
    reduce: Option<(TmaReduce, TmaType)>,
) -> Txn {
    let mut txn = Txn::new(Target::Global, line, m);
    let mut bytes = [0u8; 128];
    for &(o, a, n) in runs {
        let (lo, hi) = (a.max(line), (a + n).min(line + lb));
        if lo < hi {
            bytes[(lo - line) as usize..(hi - line) as usize]
                .copy_from_slice(&data[(o + lo - a) as usize..(o + hi - a) as usize]);
        }
    }
    match reduce {
        None => txn.data = bytes,
        Some((r, ty)) => {
            txn.reduce = Some(Box::new(LineReduce {
                op: reduce_op(r),
                ty: element_type(ty),
                operand: bytes,
            }))
        }
    }
    txn
}

/// The atomic function of a bulk reduction.
fn reduce_op(r: TmaReduce) -> AtomOp {
    match r {
        TmaReduce::Add => AtomOp::Add,
        TmaReduce::Min => AtomOp::Min,
        TmaReduce::Max => AtomOp::Max,
        TmaReduce::Inc => AtomOp::Inc,
        TmaReduce::Dec => AtomOp::Dec,
        TmaReduce::And => AtomOp::And,
        TmaReduce::Or => AtomOp::Or,
        TmaReduce::Xor => AtomOp::Xor,
    }
}

/// The element type a tensor's elements reduce as (`tf32` as `f32`).
fn element_type(ty: TmaType) -> Type {
    match ty {
        TmaType::U8 => Type::U8,
        TmaType::U16 => Type::U16,
        TmaType::U32 => Type::U32,
        TmaType::S32 => Type::S32,
        TmaType::U64 => Type::U64,
        TmaType::S64 => Type::S64,
        TmaType::F16 => Type::F16,
        TmaType::Bf16 => Type::Bf16,
        TmaType::F32 | TmaType::Tf32 => Type::F32,
        TmaType::F64 => Type::F64,
    }
}

/// The program a bulk store's line runs: `st.global.cg`, or for a reduction `red.global`
/// (the read, combine and write one step at L2, atomic as `.add` requires).
fn store_program(reduce: Option<(TmaReduce, TmaType)>) -> OpProgram {
    match reduce {
        None => cg_program("st"),
        Some(_) => crate::mem::hierarchy::program_id("red.global"),
    }
}

/// The `ld.global.cg` / `st.global.cg` program the engine's line requests run (TMA reads and
/// writes at L2).
fn cg_program(kind: &'static str) -> OpProgram {
    Prog {
        kind,
        cop: Some(CacheOp::Cg),
        volatile: false,
    }
    .id(Space::Global)
}
