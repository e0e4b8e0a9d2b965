//! The opt-in recorder of the asynchronous-synchronisation checker
//! (`gpusim_models::async_sync`): what one warp instruction does to the checker's state,
//! computed before it executes (addresses come from the registers it reads). Nothing here
//! changes the machine; when recording is off it is never called.

use super::*;
use crate::core::cluster::split_cluster_addr;
use gpusim_isa::semantics::mbarrier as mb;
use gpusim_models::async_sync::{merge_ranges, EventKind, Interest, MemSpace, Range};

impl<'a> ExecEnv<'a> {
    /// The event of `inst` for the warp's executing lanes (None: nothing the checker needs),
    /// with those lanes.
    pub fn async_event(
        &self,
        w: &Warp,
        inst: &Inst,
        interest: &Interest,
    ) -> Option<(EventKind, Mask)> {
        let active = w.simt.active_mask();
        let exec = match inst.guard {
            None => active,
            Some(g) => lanes(active)
                .filter(|&l| ((w.read(g.reg.0, l) & 1) == 1) != g.negated)
                .fold(0, |m, l| m | 1 << l),
        };
        if exec == 0 {
            return None;
        }
        let l0 = exec.trailing_zeros() as usize;
        let kind = match &inst.op {
            Op::Ld {
                space, ty, d, addr, ..
            } => {
                let n = ty.size() * d.as_slice().len() as u32;
                self.generic(w, exec, *space, addr, n, true, false)
            }
            Op::St {
                space,
                ty,
                addr,
                src,
                ..
            } => {
                let n = ty.size() * src.as_slice().len() as u32;
                self.generic(w, exec, *space, addr, n, false, false)
            }
            Op::Atom {
                space, ty, addr, ..
            } => self.generic(w, exec, *space, addr, ty.size(), false, true),
            Op::Ldmatrix {
                num, space, addr, ..
            } => self.matrix_rows(w, exec, *num, *space, addr, true),
            Op::Stmatrix {
                num, space, addr, ..
            } => self.matrix_rows(w, exec, *num, *space, addr, false),
            Op::Wgmma(op) => self.wgmma_ranges(w, op),
            Op::WgmmaFence => Some(EventKind::WgmmaFence),
            Op::WgmmaCommit => Some(EventKind::WgmmaCommit),
            Op::WgmmaWait { n } => Some(EventKind::WgmmaWait { n: *n }),
            Op::CpAsync { size, dst, src, .. } => {
                let mut smem = Vec::new();
                let mut global = Vec::new();
                for l in lanes(exec) {
                    self.push(
                        &mut smem,
                        self.effective(w, Space::Shared, dst, l),
                        *size as u64,
                    );
                    self.push(
                        &mut global,
                        self.effective(w, Space::Global, src, l),
                        *size as u64,
                    );
                }
                Some(EventKind::CpAsync {
                    smem: merge_ranges(smem),
                    global: merge_ranges(global),
                })
            }
            Op::CpAsyncCommit => Some(EventKind::CpAsyncCommit),
            Op::CpAsyncWait { n } => Some(EventKind::CpAsyncWait { n: *n }),
            Op::CpAsyncMbarArrive { space, addr, .. } => self
                .local_mbar(w, *space, addr, l0)
                .map(|mbar| EventKind::CpAsyncMbarArrive { mbar }),
            Op::MbarInit { space, addr, .. } => self
                .local_mbar(w, *space, addr, l0)
                .map(|mbar| EventKind::MbarInit { mbar }),
            Op::MbarArrive { space, addr, .. } => {
                // Each lane may name another CTA's barrier (remote arrives).
                let own = self.cta_linear(self.cluster_rank());
                let mut targets: Vec<(u32, u64)> = lanes(exec)
                    .filter_map(|l| self.mbar_target(w, inst, *space, addr, l).ok())
                    .map(|(rank, at)| (rank.map_or(own, |r| self.cta_linear(r)), at))
                    .collect();
                targets.sort_unstable();
                targets.dedup();
                match targets.as_slice() {
                    [] => None,
                    [(c, mbar)] if *c == own => Some(EventKind::MbarArrive { mbar: *mbar }),
                    _ => Some(EventKind::MbarArriveCluster { targets }),
                }
            }
            Op::MbarWait {
                blocking,
                parity,
                space,
                addr,
                phase,
                ..
            } => {
                let mbar = self.local_mbar(w, *space, addr, l0)?;
                let word = self.read_mbar(mbar);
                let p = self.val(w, phase, l0);
                let par = if *parity { p & 1 } else { p >> 63 };
                if mb::mbar_parity_done(word, par) {
                    Some(EventKind::MbarWaitDone { mbar })
                } else if *blocking {
                    Some(EventKind::MbarWaitPark { mbar, parity: par })
                } else {
                    None
                }
            }
            Op::FenceProxyAsync {
                space,
                mbarrier_init: false,
            } => Some(EventKind::FenceProxyAsync {
                space: match space {
                    Some(Space::Global) => Some(MemSpace::Global),
                    Some(Space::Shared) => Some(MemSpace::Shared),
                    _ => None,
                },
            }),
            Op::BarrierCluster { wait } => Some(EventKind::ClusterBarrier {
                cluster: self.cta_linear(0),
                wait: *wait,
            }),
            Op::Bar { kind, id, .. } => Some(EventKind::CtaBarrier {
                id: self.val(w, id, l0) as u32,
                wait: matches!(kind, BarKind::Sync | BarKind::Red(_)),
            }),
            Op::CpAsyncBulkCommit => Some(EventKind::BulkCommit),
            Op::CpAsyncBulkWait { n, read } => Some(EventKind::BulkWait { n: *n, read: *read }),
            Op::CpAsyncBulk {
                dir,
                dst,
                src,
                size,
                mbar,
                multicast,
            } => {
                let n = self.val(w, size, l0) & 0xFFFF_FFFF;
                match dir {
                    BulkDir::SharedToGlobal => {
                        let (_, s) = self.effective(w, Space::Shared, src, l0);
                        let (_, d) = self.effective(w, Space::Global, dst, l0);
                        Some(EventKind::BulkStore {
                            smem: vec![Range::new(MemSpace::Shared, s, n)],
                            global: vec![Range::new(MemSpace::Global, d, n)],
                            reduce: false,
                        })
                    }
                    // A DSMEM bulk copy (`.shared::cluster.shared::cta`) is recorded by its
                    // write into the peer; its read of the own CTA's bytes is not.
                    BulkDir::GlobalToShared | BulkDir::SharedToCluster => {
                        let (_, at) = self.effective(w, Space::Shared, dst, l0);
                        let (rank, d) = self.cluster_target(w, inst, l0, at, n).ok()?;
                        let smem = vec![Range::new(MemSpace::Shared, d, n)];
                        self.copy_in(w, inst, l0, smem, rank, mbar.as_ref()?, multicast)
                    }
                }
            }
            Op::CpAsyncBulkTensor {
                dir,
                rank,
                smem,
                tmap,
                coords,
                mbar,
                multicast,
            } => {
                let map = self.tensor_map(w, inst, l0, tmap, *rank).ok()?;
                let (_, at) = self.effective(w, Space::Shared, smem, l0);
                let (dst_rank, base) = self.cluster_target(w, inst, l0, at, 0).ok()?;
                let chunks: Vec<Range> = (0..map.box_bytes().div_ceil(16))
                    .map(|k| Range::new(MemSpace::Shared, map.shared_addr(base, 16 * k), 16))
                    .collect();
                let smem = merge_ranges(chunks);
                match dir {
                    TensorDir::Load => {
                        self.copy_in(w, inst, l0, smem, dst_rank, mbar.as_ref()?, multicast)
                    }
                    TensorDir::Store | TensorDir::Reduce(_) => {
                        let c: Vec<i64> = coords[..*rank as usize]
                            .iter()
                            .map(|o| self.val(w, o, l0) as u32 as i32 as i64)
                            .collect();
                        let mut global = Vec::new();
                        map.for_each_run(&c, |_, a, n| {
                            global.push(Range::new(MemSpace::Global, a, n))
                        });
                        Some(EventKind::BulkStore {
                            smem,
                            global: merge_ranges(global),
                            reduce: matches!(dir, TensorDir::Reduce(_)),
                        })
                    }
                }
            }
            _ => None,
        };
        match kind {
            Some(k) => Some((k, exec)),
            // An ordinary instruction touching a wgmma register: the checker reads which from
            // the IR.
            None if interest.touches(w.func().0, w.pc()) => Some((
                EventKind::Generic {
                    reads: Vec::new(),
                    writes: Vec::new(),
                    atomic: false,
                },
                exec,
            )),
            None => None,
        }
    }

    /// A generic-proxy access of `n` bytes per lane (shared and global only).
    #[allow(clippy::too_many_arguments)]
    fn generic(
        &self,
        w: &Warp,
        exec: Mask,
        space: Space,
        addr: &Address,
        n: u32,
        read: bool,
        atomic: bool,
    ) -> Option<EventKind> {
        let mut v = Vec::new();
        for l in lanes(exec) {
            self.push(&mut v, self.effective(w, space, addr, l), n as u64);
        }
        let v = merge_ranges(v);
        let (reads, writes) = if read {
            (v, Vec::new())
        } else if atomic {
            (v.clone(), v)
        } else {
            (Vec::new(), v)
        };
        Some(EventKind::Generic {
            reads,
            writes,
            atomic,
        })
    }

    /// `ldmatrix`/`stmatrix`: 16-byte rows addressed by lanes 0..8·num.
    fn matrix_rows(
        &self,
        w: &Warp,
        exec: Mask,
        num: u8,
        space: Space,
        addr: &Address,
        read: bool,
    ) -> Option<EventKind> {
        let mut v = Vec::new();
        for l in lanes(exec).filter(|&l| l < 8 * num as usize) {
            self.push(&mut v, self.effective(w, space, addr, l), 16);
        }
        let v = merge_ranges(v);
        let (reads, writes) = if read {
            (v, Vec::new())
        } else {
            (Vec::new(), v)
        };
        Some(EventKind::Generic {
            reads,
            writes,
            atomic: false,
        })
    }

    /// The shared bytes a warp's wgmma slice reads: its 16 rows of A (from a descriptor) and
    /// all of B, 16-byte chunks (each contiguous in every layout and swizzle).
    fn wgmma_ranges(&self, w: &Warp, op: &Wgmma) -> Option<EventKind> {
        let spec = sem::WgmmaSpec {
            n: op.n as usize,
            dty: op.dty,
            aty: op.aty,
            bty: op.bty,
            neg_a: op.neg_a,
            neg_b: op.neg_b,
        };
        let k = spec.k();
        let q = (w.warp_in_cta % 4) as usize;
        let mut operands = vec![(op.b, op.trans_b, op.bty.size(), 0, op.n as usize)];
        if let WgmmaA::Desc(o) = &op.a {
            operands.push((*o, op.trans_a, op.aty.size(), 16 * q, 16));
        }
        let mut v = Vec::new();
        for (o, mn_major, size, first, rows) in operands {
            let desc = sem::MatrixDesc::decode(self.val(w, &o, 0));
            let per = (16 / size as usize).max(1);
            let (mn_step, k_step) = if mn_major { (per, 1) } else { (1, per) };
            for mn in (first..first + rows).step_by(mn_step) {
                for kk in (0..k).step_by(k_step) {
                    let a = sem::element_addr(&desc, mn_major, size, mn, kk);
                    v.push(Range::new(MemSpace::Shared, a, 16));
                }
            }
        }
        let accumulate = !matches!(op.scale_d, Operand::Imm(0));
        Some(EventKind::WgmmaIssue {
            smem: merge_ranges(v),
            accumulate,
        })
    }

    /// Lane `l`'s mbarrier in this CTA, through a `.shared::cluster` address of its own rank
    /// too (None: a peer CTA's or not a shared address).
    fn local_mbar(&self, w: &Warp, space: Space, addr: &Address, l: usize) -> Option<u64> {
        let (sp, at) = self.effective(w, space, addr, l);
        let (rank, off) = split_cluster_addr(at);
        (sp == Space::Shared
            && rank.is_none_or(|r| r == self.cluster_rank())
            && off + 8 <= self.shared.len() as u64)
            .then_some(off)
    }

    /// A copy into shared memory at `smem` (offsets in the destination CTA) completing on the
    /// barrier `mbar`: the own CTA only (`TmaLoad`), or the destinations in other CTAs of the
    /// cluster, multicast included (`TmaLoadCluster`).
    #[allow(clippy::too_many_arguments)]
    fn copy_in(
        &self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        smem: Vec<Range>,
        dst_rank: Option<u32>,
        mbar: &Address,
        multicast: &Option<Operand>,
    ) -> Option<EventKind> {
        let (bar_rank, bar) = self.mbar_target(w, inst, Space::Shared, mbar, l).ok()?;
        let ranks = self
            .destinations(w, inst, l, multicast, (dst_rank, bar_rank))
            .ok()?;
        if ranks == [None] {
            return Some(EventKind::TmaLoad { smem, mbar: bar });
        }
        let own = self.cluster_rank();
        let ctas = ranks
            .iter()
            .map(|r| self.cta_linear(r.unwrap_or(own)))
            .collect();
        Some(EventKind::TmaLoadCluster {
            smem,
            mbar: bar,
            ctas,
        })
    }

    /// The linear id of the CTA of cluster rank `rank` in this CTA's cluster (x fastest, as
    /// `%cluster_ctarank` numbers them; `core::cluster::cta_of`).
    fn cta_linear(&self, rank: u32) -> u32 {
        let (g, c) = (self.geom.grid, self.geom.cluster);
        let r = [rank % c[0], (rank / c[0]) % c[1], rank / (c[0] * c[1])];
        let at = |k: usize| self.ctaid[k] - self.ctaid[k] % c[k] + r[k];
        at(0) + g[0] * (at(1) + g[1] * at(2))
    }

    /// Add a lane's access if it is in shared or global memory; a `.shared::cluster` address
    /// names the own CTA's bytes or a peer's (`MemSpace::PeerShared`).
    fn push(&self, v: &mut Vec<Range>, (space, at): (Space, u64), n: u64) {
        let r = match space {
            Space::Shared => match split_cluster_addr(at) {
                (Some(r), off) if r != self.cluster_rank() => {
                    Range::new(MemSpace::PeerShared(self.cta_linear(r)), off, n)
                }
                (_, off) => Range::new(MemSpace::Shared, off, n),
            },
            Space::Global => Range::new(MemSpace::Global, at, n),
            _ => return,
        };
        v.push(r);
    }
}
